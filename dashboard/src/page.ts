import type { Child } from './dom';
import { h, put } from './dom';

/** What a page gets: where to render, its route, and a signal that aborts when the user leaves. */
export interface PageContext {
  main: HTMLElement;
  params: Record<string, string>;
  query: URLSearchParams;
  signal: AbortSignal;
  /** Runs when the user leaves the page (timers, charts). */
  onLeave(fn: () => void): void;
}

export type Page = (ctx: PageContext) => Promise<void>;

let focusHeading = false;
/** Set by the router on navigations within the dashboard (not on the first load, where focus stays at the top). */
export function setFocusHeading(v: boolean): void {
  focusHeading = v;
}

/** The page's heading and document title; the heading takes focus after navigation (screen readers announce it). */
export function pageHeader(ctx: PageContext, title: string, ...extra: Child[]): HTMLHeadingElement {
  document.title = `${title} · pricehound`;
  const h1 = h('h1', { tabindex: -1 }, title);
  put(ctx.main, h('div', { class: 'page-head' }, h1, ...extra));
  if (focusHeading) {
    focusHeading = false;
    h1.focus();
  }
  return h1;
}
