```python
print(1)
```