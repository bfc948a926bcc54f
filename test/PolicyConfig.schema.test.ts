import * as fs from 'fs'
import * as path from 'path'
import { jsonSchema } from '../src/PolicyConfig'
import { SCHEMA_FILE, schemaText } from '../scripts/policy-schema'
import { deepStrictEqual, strictEqual } from './util'

const repo = path.join(__dirname, '..')

describe('schema/policy.schema.json (the JSON Schema shipped for editors)', () => {
  it('should be PolicyConfig.jsonSchema as generated now (npm run schema writes it)', () => {
    const shipped = fs.readFileSync(path.join(repo, SCHEMA_FILE), 'utf8')
    strictEqual(shipped, schemaText())
    deepStrictEqual(JSON.parse(shipped), JSON.parse(JSON.stringify(jsonSchema)))
  })
})
