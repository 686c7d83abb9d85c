/**
 * Glob patterns as regular expressions: `*` (within a path segment), `**` (any depth), `?`,
 * `[abc]`, `{a,b}`. A pattern without `/` matches a file's base name (as ripgrep's `-g` does);
 * one with `/` matches the workspace-relative path.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (char === "*") {
      if (glob[i + 1] === "*") {
        // `**/` matches zero or more directories; a bare `**` anything.
        if (glob[i + 2] === "/") {
          source += "(?:.*/)?";
          i += 2;
        } else {
          source += ".*";
          i += 1;
        }
      } else source += "[^/]*";
    } else if (char === "?") source += "[^/]";
    else if (char === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end === -1) source += "\\[";
      else {
        const body = glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
        source += `[${body}]`;
        i = end;
      }
    } else if (char === "{") {
      braces++;
      source += "(?:";
    } else if (char === "}" && braces > 0) {
      braces--;
      source += ")";
    } else if (char === "," && braces > 0) source += "|";
    else source += char.replace(/[.+^$()|\\\]{}]/g, "\\$&");
  }
  while (braces-- > 0) source += ")";
  return new RegExp(`^${source}$`);
}

/** A predicate over workspace-relative paths (forward slashes). */
export function globMatcher(glob: string): (relativePath: string) => boolean {
  const pattern = globToRegExp(glob);
  const byName = !glob.includes("/");
  return (relativePath) => pattern.test(byName ? relativePath.slice(relativePath.lastIndexOf("/") + 1) : relativePath);
}
