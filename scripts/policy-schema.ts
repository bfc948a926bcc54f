/**
 * `npm run schema`: writes schema/policy.schema.json, the JSON Schema of a policy document that the package ships
 * for editors (`"$schema": "./node_modules/fp-ts-retry/schema/policy.schema.json"`). It is `PolicyConfig.jsonSchema`
 * as it is, generated from the codec's own grammar table; test/PolicyConfig.schema.test.ts fails while the file is
 * stale.
 */
import * as fs from 'fs'
import * as path from 'path'
import { jsonSchema } from '../src/PolicyConfig'

/** Where the schema ships, from the repository's root. */
export const SCHEMA_FILE = path.join('schema', 'policy.schema.json')

/** The text of the file: the schema, two spaces deep, and a last newline. */
export const schemaText = (): string => `${JSON.stringify(jsonSchema, null, 2)}\n`

if (require.main === module) {
  const file = path.join(__dirname, '..', SCHEMA_FILE)
  const fresh = schemaText()
  if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== fresh) {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, fresh)
    console.log(`wrote ${SCHEMA_FILE}`)
  }
}
