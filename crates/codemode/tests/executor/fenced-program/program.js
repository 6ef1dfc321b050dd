```js
async () => {
  return await items.echo({ok: true})
}
```
