// Regenerates api-types/src/ (the package @platform/api-types) from contracts/ (the generated files are committed).
import { mkdir, writeFile } from 'node:fs/promises';
import { generateTypes, generatedDir, relativeToRoot } from '@platform/shared/tools/generate-types';

await mkdir(generatedDir, { recursive: true });
for (const [path, content] of Object.entries(await generateTypes())) {
  await writeFile(path, content);
  console.log(`wrote ${relativeToRoot(path)}`);
}
