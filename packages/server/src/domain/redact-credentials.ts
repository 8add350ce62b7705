/** Credentials in a URL (`scheme://user:password@`), wherever they appear in a text. */
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@"']*):[^\s"']*@/gi;

/**
 * The text with the password of every URL in it masked: `postgres://cairn:***@host/db`. For
 * what reaches a log or a terminal: a connection string an error repeats.
 */
export const redactCredentials = (text: string): string => text.replace(URL_CREDENTIALS, '$1:***@');
