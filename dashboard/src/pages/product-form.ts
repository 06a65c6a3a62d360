import { ApiError, api, newIdempotencyKey } from '../api';
import { h, put } from '../dom';
import { rememberProduct } from '../names';
import type { Product, ProductInput } from '../types';
import { clearErrors, control, errorBox, field, modal, showFieldErrors, textarea, toast, withBusy } from '../ui';

const OPTIONAL = ['sku', 'brand', 'category', 'url', 'description'] as const;

/** Reads the form into a create or update body; on update only what changed (null clears a field). */
function readForm(form: HTMLFormElement, before: Product | null): ProductInput {
  const v = (name: string) => control(form, name)?.value ?? '';
  const out: Record<string, unknown> = {};
  const name = v('name');
  if (!before || name !== before.name) out.name = name;
  const priceText = v('base_price').trim();
  const price = priceText === '' ? NaN : Number(priceText);
  // Sent as typed: the API refuses what is not a number with at most 4 decimals (422 on base_price).
  if (!before || price !== before.base_price) out.base_price = Number.isFinite(price) ? price : priceText;
  const currency = v('currency').trim().toUpperCase();
  if (!before || currency !== before.currency) out.currency = currency;
  for (const k of OPTIONAL) {
    const val = v(k);
    const old = before?.[k] ?? null;
    if (before) {
      const next = val === '' ? null : val;
      if (next !== old) out[k] = next;
    } else if (val !== '') out[k] = val;
  }
  return out as ProductInput;
}

/** The product form in a dialog: create (product null) or edit. Resolves with the saved product, or null when closed. */
export function openProductForm(product: Product | null): Promise<Product | null> {
  return new Promise((resolve) => {
    let saved: Product | null = null;
    const formError = h('div');
    const submit = h('button', { type: 'submit' }, product ? 'Save changes' : 'Create product');
    const form = h(
      'form',
      { class: 'grid-form', novalidate: true, 'aria-label': product ? 'Edit product' : 'New product' },
      field({ name: 'name', label: 'Name', required: true, value: product?.name, maxlength: 200 }),
      field({ name: 'sku', label: 'SKU', value: product?.sku, maxlength: 100, hint: 'Unique within your account' }),
      field({ name: 'brand', label: 'Brand', value: product?.brand, maxlength: 100 }),
      field({ name: 'category', label: 'Category', value: product?.category, maxlength: 100 }),
      field({ name: 'base_price', label: 'Base price', required: true, value: product?.base_price, inputmode: 'decimal', hint: 'Up to 4 decimals, e.g. 49.99' }),
      field({ name: 'currency', label: 'Currency', required: true, value: product?.currency ?? 'EUR', maxlength: 3, hint: 'ISO 4217 code: EUR, USD, GBP…' }),
      field({ name: 'url', label: 'Product page', type: 'url', value: product?.url, hint: 'http(s) address of our own page' }),
      textarea({ name: 'description', label: 'Description', value: product?.description, maxlength: 10_000 }),
      formError,
      h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => close() }, 'Cancel'), submit),
    );
    const { close } = modal(product ? `Edit ${product.name}` : 'New product', form, { onClose: () => resolve(saved) });
    control(form, 'name')?.focus();
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      clearErrors(form);
      put(formError);
      const body = readForm(form, product);
      if (product && Object.keys(body).length === 0) {
        close();
        return;
      }
      // One key per submission: a corrected resubmission is a new request, not a replay.
      const idempotencyKey = newIdempotencyKey();
      void withBusy(submit, null, async () => {
        try {
          saved = product
            ? await api<Product>(`/products/${encodeURIComponent(product.id)}`, { method: 'PATCH', body })
            : await api<Product>('/products', { method: 'POST', body, idempotencyKey });
        } catch (err) {
          const rest = err instanceof ApiError ? showFieldErrors(form, err.details) : [];
          if (!(err instanceof ApiError) || rest.length > 0 || err.details.length === 0) {
            put(formError, errorBox(err instanceof ApiError && rest.length > 0 ? new ApiError(err.status, err.message, err.code, rest) : err));
          }
          return;
        }
        rememberProduct(saved);
        toast(product ? `Saved ${saved.name}.` : `Created ${saved.name}.`);
        close();
      });
    });
  });
}
