import { ApiError, ph } from '../api';
import { h, put } from '../dom';
import { rememberProduct } from '../names';
import type { Product, ProductUpdate } from '../types';
import { clearErrors, control, errorBox, field, modal, showFieldErrors, textarea, toast, withBusy } from '../ui';

const OPTIONAL = ['sku', 'brand', 'category', 'url', 'description'] as const;

/** Reads the form into an update body: on update only what changed (null clears a field); on create every field given. */
function readForm(form: HTMLFormElement, before: Product | null): { body: ProductUpdate; price: number } {
  const v = (name: string) => control(form, name)?.value ?? '';
  const body: ProductUpdate = {};
  const name = v('name');
  if (!before || name !== before.name) body.name = name;
  const priceText = v('base_price').trim();
  const price = priceText === '' ? NaN : Number(priceText);
  if (!before || price !== before.base_price) body.base_price = price;
  const currency = v('currency').trim().toUpperCase();
  if (!before || currency !== before.currency) body.currency = currency;
  for (const k of OPTIONAL) {
    const val = v(k);
    const old = before?.[k] ?? null;
    if (before) {
      const next = val === '' ? null : val;
      if (next !== old) body[k] = next;
    } else if (val !== '') body[k] = val;
  }
  return { body, price };
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
      field({
        name: 'base_price',
        label: 'Base price',
        required: true,
        value: product?.base_price,
        inputmode: 'decimal',
        hint: 'Up to 4 decimals, e.g. 49.99',
      }),
      field({
        name: 'currency',
        label: 'Currency',
        required: true,
        value: product?.currency ?? 'EUR',
        maxlength: 3,
        hint: 'ISO 4217 code: EUR, USD, GBP…',
      }),
      field({
        name: 'url',
        label: 'Product page',
        type: 'url',
        value: product?.url,
        hint: 'http(s) address of our own page',
      }),
      textarea({ name: 'description', label: 'Description', value: product?.description, maxlength: 10_000 }),
      formError,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', onclick: () => close() }, 'Cancel'),
        submit,
      ),
    );
    const { close } = modal(product ? `Edit ${product.name}` : 'New product', form, { onClose: () => resolve(saved) });
    control(form, 'name')?.focus();
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      clearErrors(form);
      put(formError);
      const { body, price } = readForm(form, product);
      if (product && Object.keys(body).length === 0) {
        close();
        return;
      }
      if (!Number.isFinite(price)) {
        showFieldErrors(form, [{ field: 'base_price', message: 'must be an amount, e.g. 49.99' }]);
        return;
      }
      // Each submission is one call: the client gives it one Idempotency-Key for its retries.
      void withBusy(submit, null, async () => {
        let answer: Product;
        try {
          answer = product
            ? await ph.PATCH('/api/v1/products/{id}', { params: { path: { id: product.id } }, body })
            : await ph.POST('/api/v1/products', {
                body: { ...body, name: body.name ?? '', base_price: price, currency: body.currency ?? '' },
              });
        } catch (err) {
          const rest = err instanceof ApiError ? showFieldErrors(form, err.details) : [];
          if (!(err instanceof ApiError) || rest.length > 0 || err.details.length === 0)
            put(formError, errorBox(err, rest));
          return;
        }
        saved = answer;
        rememberProduct(answer);
        toast(product ? `Saved ${answer.name}.` : `Created ${answer.name}.`);
        close();
      });
    });
  });
}
