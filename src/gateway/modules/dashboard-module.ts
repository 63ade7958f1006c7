/**
 * The dashboard: the built web app's files at `/` (they hold no data; every call the page makes is authenticated like
 * any client's). Left out with `web.enabled: false`. It only contributes the directory: the REST app serves it after
 * every route, so it comes before the armory module in the list.
 */
import { DEFAULT_WEB_DIR } from '../web/web-assets.js';
import type { GatewayModule } from './module.js';

/** The dashboard module (module-list.ts). */
export const dashboardModule: GatewayModule = {
  name: 'dashboard',
  serves: 'the dashboard’s files at `/` when `web.enabled`',
  enabled: (config) => config.web.enabled,
  build: (core) => ({ webDir: core.config.web.dir ?? DEFAULT_WEB_DIR }),
};
