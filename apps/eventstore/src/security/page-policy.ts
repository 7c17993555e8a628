/**
 * The Content-Security-Policy of the server's HTML pages (the console, the debug page): scripts
 * and requests to this server only, no inline script (each page's script is a file it serves),
 * no plugins, no `<base>`, no form posts, never framed. Inline styles stay allowed: a page's
 * `<style>` carries no data.
 */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
