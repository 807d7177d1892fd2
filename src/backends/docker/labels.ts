/**
 * The labels Shellwright puts on its containers: how `shellwright sessions`
 * finds them, and which ones a user's `labels` option may not set.
 */

export const DOCKER_LABEL = "shellwright";
export const KEEP_LABEL = "shellwright.keep";
export const OWNER_LABEL = "shellwright.owner";
