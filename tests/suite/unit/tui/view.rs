mod evidence;
