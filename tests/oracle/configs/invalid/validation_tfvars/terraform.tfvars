vm_id = 7
