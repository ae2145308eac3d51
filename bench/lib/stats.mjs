// Summaries of timing samples: median and p99 (nearest rank) are what the table shows.

/** Value at quantile q (0..1) by nearest rank; the median of an even count is the mean of the middle two. */
export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  if (q === 0.5 && sorted.length % 2 === 0) return (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (x) => Math.round(x * 1000) / 1000;
  return {
    n: sorted.length,
    median: round(quantile(sorted, 0.5)),
    p99: round(quantile(sorted, 0.99)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted[sorted.length - 1] ?? NaN),
    mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
  };
}

export function ratio(a, b) {
  return Math.round((a / b) * 1000) / 1000;
}
