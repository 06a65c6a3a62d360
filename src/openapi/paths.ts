export const OPENAPI_PATH = '/api/v1/openapi.json';
export const DOCS_PREFIX = '/docs';
