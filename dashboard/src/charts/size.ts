/** Calls `fn` with the element's content width now and whenever it changes (phones rotate, windows resize). */
export function observeWidth(el: HTMLElement, fn: (width: number) => void): () => void {
  let last = 0;
  const ro = new ResizeObserver((entries) => {
    const w = Math.floor(entries[0]?.contentRect.width ?? 0);
    if (w > 0 && w !== last) {
      last = w;
      fn(w);
    }
  });
  ro.observe(el);
  return () => ro.disconnect();
}
