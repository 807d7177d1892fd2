/**
 * "Did you mean": names in a directory that look like a name that was not
 * found. Scored by character bigrams (Dice), with a bonus for a shared stem
 * (`config.yml` for `config.yaml`) or containment (`utils.py` for `util.py`).
 */

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

export function nameSimilarity(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return 1;
  const stem = (name: string): string => name.replace(/\.[^.]*$/, "");
  if (stem(x) !== "" && stem(x) === stem(y)) return 0.95;
  if (x.length >= 3 && y.length >= 3 && (x.includes(y) || y.includes(x))) return 0.8;
  const gx = bigrams(x);
  const gy = bigrams(y);
  let shared = 0;
  for (const [gram, count] of gx) shared += Math.min(count, gy.get(gram) ?? 0);
  const total = Math.max(x.length - 1, 0) + Math.max(y.length - 1, 0);
  return total === 0 ? 0 : (2 * shared) / total;
}

/** Up to `max` names scoring at least `threshold`, best first. */
export function similarNames(target: string, names: readonly string[], max = 5, threshold = 0.5): string[] {
  return names
    .filter((name) => name !== "" && name !== target)
    .map((name) => ({ name, score: nameSimilarity(target, name) }))
    .filter((entry) => entry.score >= threshold)
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((entry) => entry.name);
}
