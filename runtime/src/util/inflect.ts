const IRREGULAR: Record<string, string> = {
  people: 'person',
  children: 'child',
  men: 'man',
  women: 'woman',
  data: 'datum',
  indices: 'index',
};

/**
 * English singular of a snake_case plural, enough for relation names (`labels` → `label`,
 * `categories` → `category`, `statuses` → `status`, `boxes` → `box`). Only the last word changes.
 * The generator and the repository both use it, so `labels` means `label_ids` on both sides.
 */
export function singular(plural: string): string {
  const at = plural.lastIndexOf('_') + 1;
  const head = plural.slice(0, at);
  const word = plural.slice(at);
  const lower = word.toLowerCase();
  if (IRREGULAR[lower]) return head + IRREGULAR[lower];
  if (/[^aeiou]ies$/.test(lower)) return `${head + word.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh|us)es$/.test(lower)) return head + word.slice(0, -2);
  if (/ss$|us$|is$/.test(lower)) return head + word;
  if (/s$/.test(lower)) return head + word.slice(0, -1);
  return plural;
}
