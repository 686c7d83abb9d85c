/**
 * The PNGs the README shows: every visualizations/*.machine.svg rendered by Chromium in a 900 px
 * wide page (the README's column), written beside it as <name>.machine.png. Run by
 * `npm run visualize` after the SVGs are regenerated, and by `npm run screenshots`; never by the
 * tests (theirs go to test-results/). Needs Chromium (`apt-get install chromium fonts-dejavu-core`).
 *
 *   tsx scripts/screenshot-diagrams.ts [--out DIR]   (default visualizations/)
 */
import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHROMIUM, launchChromium } from "../test/support/chromium.js";
import { diagramPage, README_WIDTH } from "./diagram/rendered-labels.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export async function screenshotDiagrams(dir: string): Promise<string[]> {
  const svgs = (await readdir(dir)).filter((name) => name.endsWith(".machine.svg")).sort();
  const browser = await launchChromium({ width: README_WIDTH, height: 800 });
  const written: string[] = [];
  try {
    const page = await browser.context.newPage();
    for (const name of svgs) {
      await page.setContent(diagramPage(await readFile(join(dir, name), "utf8")));
      const path = join(dir, name.replace(/\.svg$/, ".png"));
      await page.locator("main > svg").screenshot({ path });
      written.push(path);
    }
  } finally {
    await browser.close();
  }
  return written;
}

async function main(argv: string[]): Promise<number> {
  const outIndex = argv.indexOf("--out");
  const dir = outIndex >= 0 && argv[outIndex + 1] ? resolve(argv[outIndex + 1]) : join(ROOT, "visualizations");
  if (!CHROMIUM) {
    console.error("screenshots: chromium not found on PATH; install it with: apt-get install -y chromium fonts-dejavu-core");
    return 1;
  }
  for (const path of await screenshotDiagrams(dir)) console.log(`wrote ${relative(process.cwd(), path)}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : error);
      process.exit(1);
    },
  );
}
