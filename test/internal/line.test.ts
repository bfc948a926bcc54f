import * as fc from 'fast-check'
import { Line, Successor, type Linked } from '../../src/internal/line'
import { deepStrictEqual } from '../util'

interface Node extends Linked<Node> {
  readonly id: number
}

/** The line from its head and, backwards, from its tail: both must be the model's order. */
const both = (line: Line<Node>): [Array<number>, Array<number>] => {
  const forwards: Array<number> = []
  for (let n = line.head; n !== undefined; n = n.next) forwards.push(n.id)
  const backwards: Array<number> = []
  for (let n = line.tail; n !== undefined; n = n.prev) backwards.unshift(n.id)
  return [forwards, backwards]
}

describe('internal/line', () => {
  it('should keep its waiters in the order they joined, whichever leave, and empty itself in takeAll', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant<'push'>('push'), fc.nat(), fc.constant<'takeAll'>('takeAll')), { maxLength: 60 }),
        (ops) => {
          const line = new Line<Node>()
          let model: Array<Node> = []
          let issued = 0
          for (const op of ops) {
            if (op === 'push') {
              const node: Node = { id: ++issued, prev: undefined, next: undefined }
              line.push(node)
              model.push(node)
            } else if (op === 'takeAll') {
              deepStrictEqual(
                line.takeAll().map((n) => n.id),
                model.map((n) => n.id)
              )
              model = []
            } else if (model.length > 0) {
              const [node] = model.splice(op % model.length, 1)
              line.remove(node)
              deepStrictEqual([node.prev, node.next], [undefined, undefined])
            }
            const ids = model.map((n) => n.id)
            deepStrictEqual(both(line), [ids, ids])
          }
        }
      )
    )
  })

  it('should take over what a successor replaces at its first use, the oldest first, each once', () => {
    const took: Array<string> = []
    class Guard extends Successor<Guard> {
      constructor(readonly name: string) {
        super()
      }
      protected takeOver(from: Guard): void {
        took.push(`${this.name} <- ${from.name}`)
        from.successor = this
      }
      use(): Guard {
        return this.successor?.use() ?? this.settled()
      }
    }
    const a = new Guard('a')
    const b = new Guard('b')
    b.pending = a
    const c = new Guard('c')
    c.pending = b
    // built, never used: nothing taken over
    deepStrictEqual(took, [])
    deepStrictEqual(c.use().name, 'c')
    deepStrictEqual(took, ['b <- a', 'c <- b'])
    // the replaced pass on to the last, and nothing is taken over again
    deepStrictEqual([a.use().name, b.use().name, c.use().name], ['c', 'c', 'c'])
    deepStrictEqual(took, ['b <- a', 'c <- b'])
  })
})
