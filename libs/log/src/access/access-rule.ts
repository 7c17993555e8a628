/** What a rule lets its principals do with the messages it covers. */
export type AccessAction = 'read' | 'write';
export const ACCESS_ACTIONS: readonly AccessAction[] = ['read', 'write'];

/**
 * One access rule (docs/security.md): the principals it names may `allow` these actions on
 * messages whose category (or stream id) matches one of `categories` and whose type matches
 * one of `types`. Patterns are globs (`*` any text, `?` one character); `invoice-*` matches the
 * streams `invoice-17`, hence the category `invoice`. Absent `categories` or `types`: all.
 */
export interface AccessRule {
  /**
   * Who: `token:<name>` (a static token), `jwt:<subject>`, `group:<name>` (a JWT's groups
   * claim), or `*` (every authenticated principal). A glob after the prefix is allowed.
   */
  principal: string;
  allow: AccessAction[];
  categories?: string[];
  types?: string[];
}

/** Who asks, as the rules see it. */
export interface AccessPrincipal {
  kind: 'token' | 'jwt';
  name: string;
  groups: readonly string[];
}

/** What a message is, as the rules see it: its stream (null outside any) and type. */
export interface AccessSubject {
  streamId?: string | null;
  messageType: string;
}

/** An access rule the configuration refuses; the message names it. */
export class AccessRuleError extends Error {}
