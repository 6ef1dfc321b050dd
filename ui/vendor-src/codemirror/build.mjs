// Bundles entry.mjs into ../../src/vendor/codemirror.js (committed, so building the console needs no npm):
//   cd ui/vendor-src/codemirror && npm ci && node build.mjs
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
await build({
  entryPoints: [join(here, "entry.mjs")],
  bundle: true,
  format: "esm",
  minify: true,
  legalComments: "eof",
  target: "es2020",
  outfile: join(here, "..", "..", "src", "vendor", "codemirror.js"),
});
console.log("ui/src/vendor/codemirror.js built");
