import Ajv from 'ajv'
import * as E from 'fp-ts/Either'
import * as fs from 'fs'
import * as path from 'path'
import { jsonSchema, parse } from '../src/PolicyConfig'
import { SCHEMA_FILE, schemaText } from '../scripts/policy-schema'
import { deepStrictEqual, strictEqual } from './util'

const repo = path.join(__dirname, '..')

describe('schema/policy.schema.json (the JSON Schema shipped for editors)', () => {
  it('should be PolicyConfig.jsonSchema as generated now (npm run schema writes it)', () => {
    const shipped = fs.readFileSync(path.join(repo, SCHEMA_FILE), 'utf8')
    strictEqual(shipped, schemaText())
    deepStrictEqual(JSON.parse(shipped), JSON.parse(JSON.stringify(jsonSchema)))
  })

  // docs/configuration.md lists these as the codec's alone: if the schema learns one, the guide should say so
  it('should leave to the codec what docs/configuration.md says it does (a schema cannot say it simply)', () => {
    const validate = new Ajv({ allErrors: true }).compile(jsonSchema)
    const one = (pipeline: unknown): unknown => ({ policies: { p: pipeline } })
    const codecOnly = [
      one({ retry: { constant: 'ten' } }),
      one({ retry: { constant: 1 }, hedging: { delays: { constant: 1 } } }),
      one({ key: { template: '{tenent}', maxKeys: 1 } }),
      one({ breaker: { kind: 'count', size: 2, minimumCalls: 5, failureRate: 0.5, halfOpenAfter: { constant: 1 } } })
    ]
    for (const document of codecOnly) {
      strictEqual(validate(document), true)
      strictEqual(E.isLeft(parse(document)), true)
    }
  })
})
