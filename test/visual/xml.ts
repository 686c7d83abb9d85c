/**
 * A small well-formedness check for generated SVG: balanced, properly nested tags, quoted
 * attributes without duplicates, no stray `<` or bare `&` in text. Returns the problems found.
 */
export function checkXml(source: string): string[] {
  const problems: string[] = [];
  const stack: string[] = [];
  const body = source
    .replace(/^\uFEFF?<\?xml[^?]*\?>/, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/, "")
    .replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, "");
  const tag = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y;
  const attribute = /([^\s=>/]+)\s*=\s*(?:"[^"]*"|'[^']*')/g;
  let roots = 0;
  let i = 0;
  while (i < body.length) {
    const lt = body.indexOf("<", i);
    const text = body.slice(i, lt < 0 ? body.length : lt);
    if (/&(?!(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);)/.test(text)) problems.push(`bare & near offset ${i}`);
    if (stack.length === 0 && text.trim() !== "") problems.push(`text outside the root near offset ${i}`);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const match = tag.exec(body);
    if (!match) {
      problems.push(`malformed tag at offset ${lt}: ${body.slice(lt, lt + 40)}`);
      break;
    }
    const [, closing, name, attrs, selfClosing] = match;
    const names = [...attrs.matchAll(attribute)].map((a) => a[1]);
    if (new Set(names).size !== names.length) problems.push(`duplicate attribute in <${name}>`);
    if (closing) {
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open ?? "nothing"}>`);
    } else if (!selfClosing) {
      if (stack.length === 0) roots++;
      stack.push(name);
    } else if (stack.length === 0) roots++;
    i = tag.lastIndex;
  }
  if (stack.length > 0) problems.push(`unclosed: ${stack.join(" > ")}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return problems;
}
