// Makes every `bin` entry of package.json executable after tsc, which writes files 0644.
const fs = require('node:fs');
const path = require('node:path');
const pkg = require('../package.json');
for (const rel of Object.values(pkg.bin)) {
  const file = path.join(__dirname, '..', rel);
  if (fs.existsSync(file)) fs.chmodSync(file, 0o755);
}
