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
/** name → content: a string (text) or a Buffer (the PNG icons). */
const files = new Map();
files.set("app.js", text(js));
files.set("app.css", text(css));
const template = await readFile(here("./src/index.html"), "utf8");
files.set(
  "index.html",
  template.replace("__JS_HASH__", hash(files.get("app.js"))).replace("__CSS_HASH__", hash(files.get("app.css"))),
);
// The installable app: its manifest and icons, copied as they are.
files.set("manifest.webmanifest", await readFile(here("./src/manifest.webmanifest"), "utf8"));
for (const icon of ["icon.svg", "icon-192.png", "icon-512.png"]) {
  const raw = await readFile(here(`./src/icons/${icon}`));
  files.set(`icons/${icon}`, icon.endsWith(".svg") ? raw.toString("utf8") : raw);
}
// The service worker caches the shell under the build's identity, so every build that
// changes any of it is a new worker.
const shell = ["./", ...[...files.keys()].filter((n) => n !== "index.html").map((n) =>
  n === "app.js" || n === "app.css" ? `${n}?v=${hash(files.get(n))}` : n,
)];
const build = hash([...files.entries()].map(([n, c]) => `${n}:${hash(c)}`).join("\n"));
const sw = await esbuild.build({
  ...common,
  entryPoints: ["sw/sw.ts"],
  outfile: "out/sw.js",
  format: "iife",
  define: { SHELL: JSON.stringify(shell), BUILD: JSON.stringify(build) },
});
files.set("sw.js", text(sw));

if (check) {
  const problems = [];
  // Dotfiles (dist/.gitkeep) are not the build's.
  const present = (await readdir(outDir, { recursive: true }).catch(() => []))
    .filter((n) => !n.split("/").some((part) => part.startsWith(".")))
    .filter((n) => n !== "icons");
  for (const name of new Set([...present, ...files.keys()])) {
    const want = files.get(name);
    const got = await readFile(join(outDir, name)).catch(() => null);
    if (want === undefined) problems.push(`${name}: not produced by the build`);
    else if (got === null || !got.equals(Buffer.from(want))) problems.push(`${name}: ${got === null ? "missing" : "differs"}`);
  }
  if (problems.length > 0) {
    console.error(`clients/web/dist is stale (run scripts/gen-clients):\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log("clients/web/dist is current");
  process.exit(0);
}

await mkdir(join(outDir, "icons"), { recursive: true });
for (const name of await readdir(outDir)) {
  if (!name.startsWith(".") && name !== "icons" && !files.has(name)) await rm(join(outDir, name), { recursive: true, force: true });
}
for (const name of await readdir(join(outDir, "icons"))) {
  if (!files.has(`icons/${name}`)) await rm(join(outDir, "icons", name), { force: true });
}
let total = 0;
let totalGz = 0;
for (const [name, content] of files) {
  await writeFile(join(outDir, name), content);
  const raw = Buffer.byteLength(content);
  // PNGs are compressed already and go out as they are.
  const gz = typeof content === "string" ? gzipSync(content, { level: 9 }).length : raw;
  total += raw;
  totalGz += gz;
  console.log(`${name.padEnd(22)} ${String(raw).padStart(8)} B  ${String(gz).padStart(7)} B gzipped`);
}
console.log(`${"total".padEnd(22)} ${String(total).padStart(8)} B  ${String(totalGz).padStart(7)} B gzipped (limit ${LIMIT} B)`);
if (totalGz > LIMIT) {
  console.error("the web client is over its size budget of 200 KB gzipped");
  process.exit(1);
}
