node = null
