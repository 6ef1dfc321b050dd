```typescript
() => 42
```