/** The reserved category of the audit trail: streams `$audit-<day>`, read with the admin scope only. */
export const AUDIT_CATEGORY = '$audit';
