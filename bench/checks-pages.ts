/** The page every benchmark check fetches: the ~147 KB fixture page, a distinct URL per listing. */
export const BENCH_PAGE = 'big-page.html';

export const pageUrl = (site: string, tag: string, i: number) => `${site}/pages/${BENCH_PAGE}?${tag}=${i}`;
