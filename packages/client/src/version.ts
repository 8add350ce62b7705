/**
 * The client's version, sent in its `user-agent`. A literal rather than read from
 * package.json, so the client needs no file access or JSON import and runs anywhere fetch
 * does. A test keeps it equal to the versions in packages/client/package.json and
 * packages/server/package.json: bump them together.
 */
export const CLIENT_VERSION = '0.1.0';
