/**
 * The envd version this server answers as (create, connect, info). The SDK
 * turns features on and off by it: 0.4.0 and later send no default user,
 * 0.5.2 adds closeStdin, 0.5.7 uploads files as application/octet-stream.
 * Features of later versions (file metadata, watch entries) are refused by
 * the SDK itself with its "update the template" error.
 */
export const ENVD_VERSION = "0.5.7";
