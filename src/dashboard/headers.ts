/**
 * Security headers of every dashboard response (its files, and its 404s). The API's own
 * responses keep theirs unchanged: they are JSON read by scripts, never rendered.
 *
 * The policy allows scripts, styles, images and fonts only from this origin (the build ships
 * them all: no CDN, no outside fonts), no inline script or style element, no eval, network calls
 * only back to this origin (the API), no plugins, no framing and no <base>.
 * Styles set from scripts through the CSSOM (element.style, which uPlot uses to place its
 * canvas and cursor) are not inline styles in CSP's sense and need no 'unsafe-inline'.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

export const DASHBOARD_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  // API keys never travel in URLs, but the dashboard's hash routes name products: no Referer anywhere.
  'Referrer-Policy': 'no-referrer',
  // frame-ancestors is the modern form; X-Frame-Options covers browsers that predate it.
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};
