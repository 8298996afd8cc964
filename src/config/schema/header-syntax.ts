/**
 * The syntax of a header name, for the keys that name a header. It lives in config/ so the schema
 * needs no feature folder; upstream/ and auth/ check header names against the same pattern.
 */

/** RFC 9110 5.6.2 token characters: what a header name may hold. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
