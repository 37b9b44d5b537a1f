/**
 * What an HTTP header name and value can be (RFC 9110 token and field-value): checked where
 * configured headers are read and where tool arguments become headers. A line break in a value
 * would end it early (header injection); undici refuses anything beyond Latin-1.
 */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
