/**
 * Measuring a dashboard table in the browser for the layout test: which key cells of the operations history stick
 * out of the table's scroll box, and whether the box or the page scrolls sideways.
 */
import type { Locator, Page } from 'playwright-core';

/** Where each key cell of the operations table sits relative to the table's scroll box (CSS px). */
export interface Fit {
  box: { left: number; right: number; scrollWidth: number; clientWidth: number };
  outside: string[];
  pageScrollWidth: number;
  viewport: number;
}

/**
 * Measures the operations table: its header cells and the key cells of every row (type, target, state, total,
 * result) against the scroll box; the page must show the table (`section.table-scroll` labelled "Operations table").
 */
export function measureOperations(page: Page): Promise<Fit> {
  return page.evaluate(() => {
    const box = document.querySelector('section.table-scroll[aria-label="Operations table"]') as HTMLElement;
    const b = box.getBoundingClientRect();
    const outside: string[] = [];
    const cells = [
      ...box.querySelectorAll('thead th'),
      ...box.querySelectorAll('tr[data-operation] [data-col="type"], tr[data-operation] [data-col="target"]'),
      ...box.querySelectorAll('tr[data-operation] [data-col="state"], tr[data-operation] [data-col="total"]'),
      ...box.querySelectorAll('tr[data-operation] [data-col="result"]'),
    ];
    for (const cell of cells) {
      const r = cell.getBoundingClientRect();
      if (r.left < b.left - 1 || r.right > b.right + 1) outside.push(`${cell.textContent?.slice(0, 30)} [${r.left}, ${r.right}]`);
    }
    return {
      box: { left: b.left, right: b.right, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth },
      outside,
      pageScrollWidth: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
    };
  });
}

/** A table's scroll box: its content and visible widths, and each column heading with its width (for messages). */
export function measureScroll(box: Locator): Promise<{ scroll: number; client: number; columns: string[] }> {
  return box.evaluate((el) => ({
    scroll: el.scrollWidth,
    client: el.clientWidth,
    columns: [...el.querySelectorAll('thead th')].map((th) => `${th.textContent} ${Math.round(th.getBoundingClientRect().width)}`),
  }));
}
