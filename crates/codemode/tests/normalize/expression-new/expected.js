async () => {
return (new Date(0).getTime())
}