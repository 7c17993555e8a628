export * from './key-provider.js';
export * from './personal-data-rule.js';
export { subjectHash, tenantSubjectHash } from './personal-crypto.js';
export * from './personal-data.service.js';
export * from './subject-erasure.service.js';
export * from './personal-data-redactor.service.js';
export { valueAt, replaceAt } from './json-pointer.js';
export type { StoredRow, StoredSeal } from './seal-stored.js';
