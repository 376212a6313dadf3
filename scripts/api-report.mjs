// The public API of `ebb`, written down: one API Extractor report per subpath in `api/`, built from
// the declarations the package ships (`packages/ebb/dist/*.d.ts`, so run `npm run build` first).
//
//   node scripts/api-report.mjs          check: fails when the API differs from api/*.api.md
//   node scripts/api-report.mjs --update rewrite api/*.api.md after an intended change
//
// A change to an export, a signature or a doc-tagged release level fails the check until the
// report is updated in the same commit, so every change to the surface is reviewed as a diff.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'packages/ebb');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const update = process.argv.includes('--update');

// Every subpath of `exports` with its ESM declarations.
const entries = Object.entries(pkg.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(([subpath, target]) => {
    const types = target?.browser?.import?.types;
    if (typeof types !== 'string') throw new Error(`exports["${subpath}"] names no browser.import.types`);
    const name = subpath === '.' ? 'ebb' : `ebb-${subpath.slice(2).replaceAll('/', '-')}`;
    return { subpath, name, types: join(pkgDir, types) };
  });

let failed = 0;
for (const entry of entries) {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: pkgDir,
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            lib: ['es2022', 'dom'],
            types: ['node'],
            strict: true,
            skipLibCheck: false,
          },
          include: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder: join(root, 'api'),
        reportTempFolder: join(root, 'api/.temp'),
      },
      newlineKind: 'lf',
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // The report marks these in place; the check is the report's diff.
        extractorMessageReporting: {
          default: { logLevel: 'none' },
          'ae-missing-release-tag': { logLevel: 'none', addToApiReportFile: false },
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
        compilerMessageReporting: { default: { logLevel: 'warning' } },
      },
    },
    configObjectFullPath: join(root, 'scripts/api-report.json'),
    packageJsonFullPath: join(pkgDir, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (m) => {
      if (m.logLevel === 'warning' || m.logLevel === 'error') {
        console.error(`${entry.name}: ${m.text}`);
      }
      m.handled = true;
    },
  });
  if (!result.succeeded || (!update && result.apiReportChanged)) {
    failed += 1;
    console.error(
      `${entry.subpath}: the public API differs from api/${entry.name}.api.md` +
        (result.apiReportChanged
          ? ' — review the change, then run `npm run api -- --update` and commit the report'
          : ''),
    );
  } else {
    console.log(
      `${entry.subpath}: api/${entry.name}.api.md ${update && result.apiReportChanged ? 'updated' : 'matches'}`,
    );
  }
}
process.exit(failed === 0 ? 0 : 1);
