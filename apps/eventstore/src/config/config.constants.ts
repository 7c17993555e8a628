/** Injection token of the server's resolved `OrdinalConfig`. */
export const ORDINAL_CONFIG = Symbol('ORDINAL_CONFIG');
