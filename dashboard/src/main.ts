import './styles.css';
import { NEAR_LIMIT, onRateLimit, setUnauthorizedHandler } from './api';
import { h, put } from './dom';
import { count, countdown } from './format';
import { type Page, type PageContext, setFocusHeading } from './page';
import { alertsPage } from './pages/alerts';
import { changesPage } from './pages/changes';
import { keysPage } from './pages/keys';
import { listingsPage } from './pages/listings';
import { notificationsPage } from './pages/notifications';
import { overviewPage } from './pages/overview';
import { productPage } from './pages/product';
import { productsPage } from './pages/products';
import { signInPage } from './pages/signin';
import { webhooksPage } from './pages/webhooks';
import { currentRoute, match } from './router';
import { clearKey, getKey } from './session';
import { errorBox, loading, statusRegionEl } from './ui';

const ROUTES: [string, Page][] = [
  ['/', overviewPage],
  ['/products', productsPage],
  ['/products/:id', productPage],
  ['/listings', listingsPage],
  ['/changes', changesPage],
  ['/alerts', alertsPage],
  ['/webhooks', webhooksPage],
  ['/notifications', notificationsPage],
  ['/keys', keysPage],
];

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/products', 'Products'],
  ['/listings', 'Competitors & listings'],
  ['/alerts', 'Alerts'],
  ['/webhooks', 'Webhooks'],
  ['/notifications', 'Notifications'],
  ['/keys', 'Keys'],
];

const app = document.getElementById('app')!;

function signOut(): void {
  clearKey();
  // A fresh page: nothing read with the key stays in memory.
  location.replace(`${location.pathname}#/`);
  location.reload();
}
setUnauthorizedHandler(() => signOut());
// Leaving a page aborts what it was still loading; those rejections are expected, not errors.
window.addEventListener('unhandledrejection', (e) => {
  if (e.reason instanceof DOMException && e.reason.name === 'AbortError') e.preventDefault();
});

/** The header's usage badge: requests left this hour, from every answer's X-RateLimit-* headers. */
function usageBadge(): HTMLElement {
  const el = h('a', { class: 'usage-badge', href: '#/', 'aria-live': 'off', title: 'Requests left this hour' }, '…');
  let reset = 0;
  let label = '';
  const render = () => {
    const left = Math.max(0, reset - Date.now() / 1000);
    put(el, `${label} · resets in ${countdown(left)}`);
  };
  onRateLimit((r) => {
    reset = r.reset;
    label = `${count(r.remaining)} / ${count(r.limit)} left`;
    el.classList.toggle('warn', r.limit - r.remaining >= r.limit * NEAR_LIMIT);
    render();
  });
  window.setInterval(() => reset && render(), 1000);
  return el;
}

function shell(): { main: HTMLElement; nav: HTMLElement } {
  const main = h('main', { id: 'main', tabindex: -1 });
  const skip = h('a', { class: 'skip', href: '#main' }, 'Skip to content');
  // The skip link must not change the hash (that is the router's): focus the content instead.
  skip.addEventListener('click', (e) => {
    e.preventDefault();
    main.focus();
  });
  const nav = h(
    'nav',
    { class: 'main-nav', 'aria-label': 'Main' },
    h(
      'ul',
      null,
      NAV.map(([path, text]) => h('li', null, h('a', { href: `#${path}`, 'data-path': path }, text))),
    ),
  );
  const header = h(
    'header',
    { class: 'top' },
    h('a', { class: 'brand', href: '#/' }, 'pricehound'),
    nav,
    h(
      'div',
      { class: 'session' },
      usageBadge(),
      h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign out'),
    ),
  );
  put(app, skip, header, main, statusRegionEl());
  return { main, nav };
}

async function start(): Promise<void> {
  if (!getKey()) {
    await signInPage(app, () => void start());
    return;
  }
  const { main, nav } = shell();
  // The badge fills from the first answer of whatever page opens (every page asks the API).

  let leave: (() => void)[] = [];
  let controller = new AbortController();
  const navigate = async () => {
    controller.abort();
    for (const fn of leave) fn();
    leave = [];
    controller = new AbortController();
    const route = currentRoute();
    let page: Page | undefined;
    let params: Record<string, string> = {};
    for (const [pattern, p] of ROUTES) {
      const m = match(pattern, route.path);
      if (m) {
        page = p;
        params = m;
        break;
      }
    }
    for (const a of nav.querySelectorAll<HTMLAnchorElement>('a[data-path]')) {
      const p = a.dataset.path!;
      const active =
        p === '/'
          ? route.path === '/' || route.path === '/changes'
          : route.path === p || route.path.startsWith(`${p}/`);
      if (active) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    // Each navigation renders into its own element: a page still finishing an earlier
    // navigation (an await that took no signal) writes into a detached element, never beside
    // the page now shown (two "New alert rule" forms were seen in the browser tests).
    const view = h('div', { class: 'view' });
    put(main, view);
    const ctx: PageContext = {
      main: view,
      params,
      query: route.query,
      signal: controller.signal,
      onLeave: (fn) => leave.push(fn),
    };
    main.setAttribute('aria-busy', 'true');
    // The loading state until the page puts its heading (every page starts with pageHeader).
    put(view, loading());
    try {
      if (!page) {
        document.title = 'Not found · pricehound';
        put(
          view,
          h('h1', { tabindex: -1 }, 'Not found'),
          h('p', null, 'No page here. ', h('a', { href: '#/' }, 'Go to the overview')),
        );
      } else {
        await page(ctx);
      }
    } catch (err) {
      // The failed (or limited) state, with the request id and a way to load the page again.
      if (!ctx.signal.aborted) {
        view.querySelector('[data-state="loading"]')?.remove();
        view.appendChild(errorBox(err, { retry: () => void navigate() }));
      }
    } finally {
      if (!ctx.signal.aborted) main.removeAttribute('aria-busy');
    }
  };
  window.addEventListener('hashchange', () => {
    // After a navigation the new page's heading takes focus (pageHeader), so screen readers announce it.
    setFocusHeading(true);
    void navigate();
  });
  await navigate();
}

void start();
