// Builds ui/dist from ui/src: the console is plain HTML, CSS and JavaScript modules, so "building" is copying
// them, stamped with the version. No npm packages are needed; node alone runs this.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, "src");
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// The TypeScript declarations are for editors and the JSDoc types, not for the webview.
cpSync(src, dist, { recursive: true, filter: (path) => !path.startsWith(join(src, "types")) });
const manifest = JSON.parse(readFileSync(join(here, "..", "src-tauri", "tauri.conf.json"), "utf8"));
const index = join(dist, "index.html");
writeFileSync(index, readFileSync(index, "utf8").replaceAll("%VERSION%", manifest.version));
console.log(`ui/dist built (version ${manifest.version})`);
