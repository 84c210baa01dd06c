// Regenerates shared/src/generated/ and clients/src/generated/ from contracts/ (the generated files are committed).
import { mkdir, writeFile } from 'node:fs/promises';
import { clientGeneratedDir, generateTypes, generatedDir, relativeToRoot } from '@platform/shared/tools/generate-types';

for (const dir of [generatedDir, clientGeneratedDir]) await mkdir(dir, { recursive: true });
for (const [path, content] of Object.entries(await generateTypes())) {
  await writeFile(path, content);
  console.log(`wrote ${relativeToRoot(path)}`);
}
