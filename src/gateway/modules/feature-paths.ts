/**
 * What the gateway's features claim of the REST surface, handed to the core: the requirement of the paths they
 * serve, which authorization consults before its own table (auth/authorization.ts), and the error shape of those
 * paths (rest/rest-app.ts). This list lives with the composition, above every feature (docs/architecture.md, "Which
 * way imports go"): the core never imports a feature to learn its paths.
 */
import type { PathRule } from '../auth/authorization.js';
import { KUBE_PATH_RULE } from '../kube/kube-endpoint.js';
import type { RestErrorShape } from '../rest/rest-app.js';
import { CLOUDDRIVER_ERROR_SHAPE, CLOUDDRIVER_PATH_RULE } from '../spinnaker/clouddriver-paths.js';
import { SIGN_IN_PATH_RULE } from '../sign-in/sign-in-paths.js';
import { DASHBOARD_PATH_RULE } from '../web/web-assets.js';

/**
 * The features' path rules, in the order they are consulted. They apply whether or not a feature is enabled: a path
 * of a disabled feature still requires what it would (and answers 404 once admitted).
 */
export const GATEWAY_PATH_RULES: readonly PathRule[] = [CLOUDDRIVER_PATH_RULE, KUBE_PATH_RULE, SIGN_IN_PATH_RULE, DASHBOARD_PATH_RULE];

/** The features' error shapes: the Clouddriver API's Spring body. */
export const GATEWAY_ERROR_SHAPES: readonly RestErrorShape[] = [CLOUDDRIVER_ERROR_SHAPE];
