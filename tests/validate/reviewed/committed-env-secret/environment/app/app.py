import os
print(open('/app/.env').read())
