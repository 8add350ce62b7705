/** A ~1 KiB JSON value, as the benchmark asks: written by the entries step, answered by its reads. */
export const VALUE = JSON.stringify({ title: 'Fix retry storm in the payment client', body: 'x'.repeat(940), state: 'merged' });
