/**
 * The four PATCH content types the sandbox API server accepts, as pure functions over plain JSON objects:
 * JSON patch, JSON merge patch, strategic merge patch and server-side apply. None mutates its inputs; every failure
 * is a {@link PatchError} whose `status` is the HTTP code to answer with.
 */
export { PatchError } from './errors.js';
export { applyJsonPatch } from './json-patch.js';
export { applyMergePatch } from './merge-patch.js';
export { applyStrategicMergePatch } from './strategic-merge.js';
export { applyServerSideApply } from './server-side-apply.js';
