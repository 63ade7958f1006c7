/** True when `root`/dist holds a build stamped after the newest source under `root`/src; `root` ends with a slash. */
export function isBuildFresh(root: string): boolean;
