/**
 * class-transformer takes a nested object's own `constructor` field for that object's class and throws
 * (a 500) when it is none; it never copies such a field anyway. So a parsed body loses them, in place and
 * without recursion, before it is transformed.
 */
export function dropConstructorFields<T>(body: T): T {
  const pending: unknown[] = [body];
  while (pending.length) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Object.hasOwn(value, 'constructor')) delete (value as { constructor?: unknown }).constructor;
    for (const child of Object.values(value)) pending.push(child);
  }
  return body;
}
