/**
 * The schema of a JSON container as the log stores it (content, data, state, body): an object
 * or an array, with anything inside. OpenAPI's `type: object` alone would rule arrays out.
 */
export const JSON_CONTAINER_SCHEMA = {
  oneOf: [
    { type: 'object' as const, additionalProperties: true },
    { type: 'array' as const, items: {} },
  ],
};
