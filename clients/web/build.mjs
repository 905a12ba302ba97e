// Builds the web client into dist/ (committed: the server embeds it).
//
//   node build.mjs               build into dist/ and print the sizes (raw and gzipped)
//   node build.mjs --check       build in memory; exit 1 when dist/ differs (stale)
//   node build.mjs --out DIR     build into DIR
//
// Reproducible: the same sources, lock file and esbuild version give byte-identical files
// (no timestamps, no absolute paths; asset URLs carry a content hash for cache busting).
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const args = process.argv.slice(2);
const check = args.includes("--check");
const outIdx = args.indexOf("--out");
const outDir = outIdx >= 0 ? args[outIdx + 1] : here("./dist");
const LIMIT = 200 * 1024;

const common = {
  bundle: true,
  minify: true,
  write: false,
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  absWorkingDir: here("."),
};

const js = await esbuild.build({
  ...common,
  entryPoints: ["src/main.tsx"],
  outfile: "out/app.js",
  format: "esm",
  jsx: "automatic",
  jsxImportSource: "preact",
  define: { "process.env.NODE_ENV": '"production"' },
});
const css = await esbuild.build({
  ...common,
  entryPoints: ["src/styles.css"],
  outfile: "out/app.css",
});

const text = (r) => r.outputFiles[0].text;
const hash = (s) => createHash("sha256").update(s).digest("hex").slice(0, 12);
const files = new Map();
files.set("app.js", text(js));
files.set("app.css", text(css));
const template = await readFile(here("./src/index.html"), "utf8");
files.set(
  "index.html",
  template.replace("__JS_HASH__", hash(files.get("app.js"))).replace("__CSS_HASH__", hash(files.get("app.css"))),
);

if (check) {
  const problems = [];
  // Dotfiles (dist/.gitkeep) are not the build's.
  const present = (await readdir(outDir).catch(() => [])).filter((n) => !n.startsWith("."));
  for (const name of new Set([...present, ...files.keys()])) {
    const want = files.get(name);
    const got = await readFile(join(outDir, name), "utf8").catch(() => null);
    if (want === undefined) problems.push(`${name}: not produced by the build`);
    else if (got !== want) problems.push(`${name}: ${got === null ? "missing" : "differs"}`);
  }
  if (problems.length > 0) {
    console.error(`clients/web/dist is stale (run scripts/gen-clients):\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log("clients/web/dist is current");
  process.exit(0);
}

await mkdir(outDir, { recursive: true });
for (const name of await readdir(outDir)) {
  if (!name.startsWith(".") && !files.has(name)) await rm(join(outDir, name), { recursive: true, force: true });
}
let total = 0;
let totalGz = 0;
for (const [name, content] of files) {
  await writeFile(join(outDir, name), content);
  const raw = Buffer.byteLength(content);
  const gz = gzipSync(content, { level: 9 }).length;
  total += raw;
  totalGz += gz;
  console.log(`${name.padEnd(12)} ${String(raw).padStart(8)} B  ${String(gz).padStart(7)} B gzipped`);
}
console.log(`${"total".padEnd(12)} ${String(total).padStart(8)} B  ${String(totalGz).padStart(7)} B gzipped (limit ${LIMIT} B)`);
if (totalGz > LIMIT) {
  console.error("the web client is over its size budget of 200 KB gzipped");
  process.exit(1);
}
