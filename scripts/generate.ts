// Regenerates shared/src/generated/ from contracts/ (the generated files are committed).
import { mkdir, writeFile } from 'node:fs/promises';
import { generateTypes, generatedDir } from './lib/generate-types.ts';

await mkdir(generatedDir, { recursive: true });
for (const [path, content] of Object.entries(await generateTypes())) {
  await writeFile(path, content);
  console.log(`wrote ${path.slice(path.indexOf('shared/'))}`);
}
