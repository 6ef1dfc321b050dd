async () => {
return (```python
print(1)
```)
}